"""Benchmark the console in a real browser: how long its pages take to load, as chromium sees it.

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/console.py [--loads 20] [--work DIR]

Over the 2,598-tool workspace of benchmarks/startup.py (../shared/fleet/catalog.json,
bootstrapped once into --work; no upstream is started), a real `serve --transport http` and
Debian's chromium driven by Selenium (headless, logged in once): the servers page (99 servers)
and the discover playground (a different fleet dev task each load, k=5: one discover and one
ranking with the channel breakdown). Per page: the browser's Navigation Timing from the start of
the navigation to the load event (p50, p95) and its server part (request sent to first byte).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any

from startup import CARTOGRAPH, catalog_fleet, tasks  # benchmarks/startup.py

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
TIMING = (
    "const n = performance.getEntriesByType('navigation')[0];"
    "return [n.loadEventEnd - n.startTime, n.responseStart - n.requestStart];"
)


def start(home: Path, config: Path) -> tuple[subprocess.Popen[str], str]:
    argv = [CARTOGRAPH, "--home", str(home), "serve", "--transport", "http", "--port", "0"]
    proc = subprocess.Popen(
        [*argv, "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "serving MCP at " in line:
            return proc, line.rsplit(" ", 1)[1].strip().rsplit("/", 1)[0]
    raise SystemExit("serve did not start")


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def load(driver: Any, url: str) -> tuple[float, float]:
    driver.get(url)
    total, server = driver.execute_script(TIMING)
    return float(total), float(server)


def row(name: str, samples: list[tuple[float, float]]) -> str:
    totals = sorted(t for t, _ in samples)
    servers = sorted(s for _, s in samples)
    p95 = totals[max(0, round(0.95 * len(totals)) - 1)]
    return (
        f"| {name} | {len(samples)} | {statistics.median(totals):.1f} | {p95:.1f} | "
        f"{statistics.median(servers):.1f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--loads", type=int, default=20)
    ap.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "cartograph-bench-startup"
    )
    args = ap.parse_args()
    made = catalog_fleet(args.work)
    if made is None:
        return
    home, config = made
    added = subprocess.run(
        [CARTOGRAPH, "--home", str(home), "clients", "add", f"bench-{id(args)}", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    key = json.loads(added.stdout)["key"]
    proc, base = start(home, config)
    driver = browser()
    try:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        driver.get(f"{base}/console/login")
        driver.find_element(By.ID, "token").send_keys(key, Keys.ENTER)
        load(driver, f"{base}/console")  # warm: index opened, caches filled
        load(driver, f"{base}/console/discover?task=warm+up")
        servers = [load(driver, f"{base}/console") for _ in range(args.loads)]
        discover = [
            load(driver, f"{base}/console/discover?" + urllib.parse.urlencode({"task": t, "k": 5}))
            for t in tasks(args.loads)
        ]
    finally:
        driver.quit()
        proc.terminate()
        proc.wait(timeout=30)
    print(f"console pages in chromium, 2,598 tools, {sys.platform}")
    print("| page | loads | p50 ms | p95 ms | server p50 ms |")
    print("|---|---|---|---|---|")
    print(row("servers (99)", servers))
    print(row("discover, k=5", discover))


if __name__ == "__main__":
    main()
