"""Console actions over a real `serve --transport http`: an admin queues a quarantine lift, the
operator's `cartograph jobs run` (the real CLI) carries it out, the page shows it lifted; a
client without the admin scope, or a form without its token, changes nothing; all audited."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from accesskit import CARTOGRAPH, session
from consolekit import Console, login, serve_console
from proxykit import call


@pytest.fixture(scope="module")
def console(golden_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    with serve_console(golden_home, tmp_path_factory.mktemp("actions")) as served:
        yield served


def _csrf(client: httpx.Client, path: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get(path).text)
    assert found
    return found[1]


def _drift(console: Console) -> None:
    async def run() -> None:
        async with session(f"{console.base}/mcp", console.keys["ops"]) as client:
            await call(client, "chaos", "mutate", {"what": "description"})
            held = await call(client, "chaos", "echo", {"text": "now?"})
            assert held.is_error

    anyio.run(run)


def _audit(console: Console, event: str) -> list[dict[str, object]]:
    lines = (console.home / "logs" / "audit.jsonl").read_text("utf-8").splitlines()
    return [r for r in map(json.loads, lines) if r.get("event") == event]


def test_a_lift_needs_an_admin_and_the_forms_token(console: Console) -> None:
    _drift(console)
    ops = login(console, console.keys["ops"])
    page = ops.get("/console/quarantine").text
    assert "chaos/echo" in page and "queue lift" not in page  # no button without the scope
    token = _csrf(ops, "/console/quarantine")
    refused = ops.post("/console/actions/lift", data={"server": "chaos", "csrf": token})
    assert refused.status_code == 403 and "needs an admin client" in refused.text
    boss = login(console, console.keys["boss"])
    assert "queue lift" in boss.get("/console/quarantine").text
    forged = boss.post("/console/actions/lift", data={"server": "chaos", "csrf": "forged"})
    assert forged.status_code == 403
    unknown = boss.post(
        "/console/actions/lift", data={"server": "calm", "csrf": _csrf(boss, "/console")}
    )
    assert unknown.status_code == 404 and "/console/servers/chaos" in unknown.text
    assert not list(console.home.glob("jobs/*.json"))  # nothing was queued
    refusals = [
        (r["client"], r["outcome"], r.get("server")) for r in _audit(console, "console-action")
    ]
    assert refusals == [
        ("ops", "refused", "chaos"),
        ("boss", "stale-form", "chaos"),
        ("boss", "not-held", "calm"),
    ]


def test_an_admin_lift_is_queued_run_by_the_operator_and_shown_lifted(console: Console) -> None:
    _drift(console)
    boss = login(console, console.keys["boss"])
    queued = boss.post(
        "/console/actions/lift", data={"server": "chaos", "csrf": _csrf(boss, "/console")}
    )
    assert queued.status_code == 303 and queued.headers["location"].startswith("/console/jobs?")
    job = queued.headers["location"].rsplit("=", 1)[1]
    jobs = boss.get(queued.headers["location"]).text
    assert f"Queued job <code>{job}</code>" in jobs and "reattest" in jobs and ">queued<" in jobs
    run = subprocess.run(
        [CARTOGRAPH, "--home", str(console.home), "jobs", "run", "--config", str(console.config),
         "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (done,) = json.loads(run.stdout)
    assert done["id"] == job and done["state"] == "done"
    assert "bootstrap --server chaos" in done["outcome"]
    for _ in range(100):  # the serving proxy sees the new card within its poll interval
        if "Nothing is quarantined" in boss.get("/console/quarantine").text:
            break
        time.sleep(0.1)
    assert "Nothing is quarantined" in boss.get("/console/quarantine").text
    assert ">done<" in boss.get("/console/jobs").text
    actions = _audit(console, "console-action")
    assert {"client": "boss", "action": "lift", "job": job, "outcome": "queued"}.items() <= (
        actions[-1].items()
    )
    assert _audit(console, "job-run")[-1]["job"] == job
    before = (
        int(
            re.findall(r'href="/console/servers/chaos/versions/(\d+)"', boss.get("/console").text)[
                0
            ]
        )
        - 1
    )
    old = boss.get(f"/console/servers/chaos/versions/{before}")  # the card the drift was held on
    assert old.status_code == 200 and f"Version {before} of this card" in old.text
    assert "not served" in old.text and "quarantined" not in old.text


def test_a_regeneration_is_queued_only_for_a_client_that_sees_everything(
    console: Console,
) -> None:
    boss = login(console, console.keys["boss"])
    assert "queue regeneration" in boss.get("/console/rift").text
    queued = boss.post("/console/actions/regenerate", data={"csrf": _csrf(boss, "/console")})
    assert queued.status_code == 303
    narrow = login(console, console.keys["narrow"])
    jobs = narrow.get("/console/jobs").text
    assert "regenerate" not in jobs  # a job over every server is not a narrow client's to see
    assert "regenerate" in boss.get("/console/jobs").text
    warden = login(console, console.keys["warden"])  # an admin, but allowed calm only
    refused = warden.post("/console/actions/regenerate", data={"csrf": _csrf(warden, "/console")})
    assert refused.status_code == 403 and "allowed all tools" in refused.text
    outcomes = [(r["client"], r["outcome"]) for r in _audit(console, "console-action")
                if r["action"] == "regenerate"]  # fmt: skip
    assert outcomes == [("boss", "queued"), ("warden", "refused")]


def test_every_form_without_its_token_is_refused_and_audited(console: Console) -> None:
    bare = httpx.post(f"{console.base}/console/login", data={"token": console.keys["ops"]})
    assert bare.status_code == 403
    boss = login(console, console.keys["boss"])
    for path in ("/console/actions/regenerate", "/console/logout"):
        assert boss.post(path, data={"csrf": "forged"}).status_code == 403
    assert boss.get("/console").status_code == 200  # still logged in
    assert _audit(console, "console-login")[-2]["outcome"] == "stale-form"  # then boss's login
    assert _audit(console, "console-logout")[-1] == {
        **_audit(console, "console-logout")[-1], "client": "boss", "outcome": "stale-form"
    }  # fmt: skip
    assert any(
        r["action"] == "regenerate" and r["outcome"] == "stale-form"
        for r in _audit(console, "console-action")
    )
