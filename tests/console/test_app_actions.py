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
    assert [r["outcome"] for r in _audit(console, "console-action")] == ["refused"]


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
