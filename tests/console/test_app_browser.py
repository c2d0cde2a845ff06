"""The console in a real browser: Debian's chromium and chromedriver (installed by
scripts/setup-browser.sh and .ci/run), driven by Selenium pointed at those binaries, over a real
`serve --transport http`: log in, see the servers, run a discover, open the audit entry it wrote,
lift a quarantine from the page as an admin (the operator's `jobs run` carries it out), open
Rift; at phone width and by keyboard.

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

CHROMIUM = Path("/usr/bin/chromium")
DRIVER = Path("/usr/bin/chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM.is_file() and DRIVER.is_file()),
    reason="chromium and chromedriver absent: run scripts/setup-browser.sh",
)


@pytest.fixture(scope="module")
def console(golden_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    with serve_console(golden_home, tmp_path_factory.mktemp("browser")) as served:
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
    before: a stale element is read again)."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    seen = {"text": ""}

    def ready(d: Any) -> bool:
        try:
            seen["text"] = text_of(d)
        except StaleElementReferenceException:
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
    wait_for(d, "Servers", "chaos", "calm")
    assert "signed in as ops" in d.find_element(By.TAG_NAME, "header").text
    shot(d, "servers")

    d.find_element(By.LINK_TEXT, "chaos").click()
    wait_for(d, "signed card text", "echo")
    shot(d, "server")

    d.find_element(By.LINK_TEXT, "discover").click()
    wait_for(d, "Discover playground")
    d.find_element(By.ID, "task").send_keys("add two numbers", Keys.ENTER)
    ranked = wait_for(d, "signed card text that ranked it")
    assert "chaos/add" in ranked or "calm/add" in ranked
    assert "dense" in ranked and "bm25" in ranked
    shot(d, "discover")

    d.find_element(By.LINK_TEXT, "audit").click()
    wait_for(d, "Audit trail", "add two numbers")
    entry = d.find_element(By.XPATH, "//tr[td[2][text()='discover']]")
    assert "add two numbers" in entry.text and "ops" in entry.text
    shot(d, "audit")


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
    d: Any = browser
    d.get(f"{console.base}/console/rift")
    wait_for(d, "tools in clusters")
    shot(d, "rift")
    d.set_window_size(390, 844)
    try:
        for path in ("/console", "/console/discover?task=read+a+file", "/console/audit"):
            d.get(console.base + path)
            width = d.execute_script("return [document.body.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1], f"{path} overflows at phone width: {width}"
            if path == "/console":
                shot(d, "servers-phone")
    finally:
        d.set_window_size(1280, 900)
