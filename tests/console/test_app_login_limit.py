"""Guessing keys at the console's login is rate-limited per address, and audited."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from consolekit import login_form, serve_console

from cartograph.console.app import LOGIN_PER_MINUTE


def test_wrong_keys_are_rate_limited_and_every_attempt_is_audited(
    golden_home: Path, tmp_path: Path
) -> None:
    with serve_console(golden_home, tmp_path) as console:
        client = httpx.Client(base_url=console.base, timeout=60)
        csrf = login_form(client)
        codes = [
            client.post("/console/login", data={"token": f"cg_{k:012x}_x", "csrf": csrf})
            for k in range(int(LOGIN_PER_MINUTE) + 3)
        ]
        right = client.post("/console/login", data={"token": console.keys["ops"], "csrf": csrf})
    statuses = [r.status_code for r in codes]
    assert statuses[0] == 401 and statuses[-1] == 429
    limited = codes[-1]
    assert "Too many login attempts from 127.0.0.1: at most 10 a minute. Wait " in limited.text
    assert 'name="token"' in limited.text  # the login page again, not an error page
    assert int(limited.headers["retry-after"]) >= 1
    assert right.status_code == 429  # even the right key waits: the address is limited
    audit = console.home / "logs" / "audit.jsonl"
    events = [json.loads(line) for line in audit.read_text(encoding="utf-8").splitlines()]
    logins = [e["outcome"] for e in events if e["event"] == "console-login"]
    assert logins.count("refused") == statuses.count(401)
    assert logins.count("rate-limited") == statuses.count(429) + 1
